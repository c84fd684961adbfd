"""The value-origin index of a snapshot: where each value a guard reads comes from.

A guard reads names (`page_size`, `self.use_fp8`, `batch.rollout`); one function's text rarely
tells where they come from. This package follows them across the whole snapshot: a parameter to
what the callers pass (in any module), `self.x` to where the class assigns it, a receiver to its
annotated class, until each reaches an input a user controls (a server flag, a request field, an
environment variable, the model's configuration, the hardware, a package) or only state the
project computes itself. In: the snapshot's file texts and its sites. Out: one `Origin` per site
(`errkb.core.records`), with the chain of names that shows it. Pure: source text in, records out.
"""
