"""Where a guard's values come from: the user's inputs (request fields, environment variables,
the model's configuration, the hardware, a package's version) and the source's own notes.

In: a site's guard and the snapshot's value-origin findings. Out: the inputs a check reads.
"""
