"""An error across releases: its timeline, its lineage, and the errors related to it.

In: the snapshots an error occurs in. Out: facts about versions, never guesses.
"""
