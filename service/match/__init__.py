"""Match: pasted log or traceback text to the errors it shows."""
