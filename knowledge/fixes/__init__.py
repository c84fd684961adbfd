"""What to do: solutions and the example fix, the input to change first.

In: the reading of a site and who hits it. Out: ordered solutions and a before/after.
"""
