"""The entry's sentences: the guard read as facts, the message's own words, what it means.

In: a site, its origins and who hits it. Out: plain sentences for a person.
"""
