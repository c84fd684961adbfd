"""Who hits an error: the class of the input that leads to it (a flag, a request, the model...),
or that only a bug in the project can, with the chain of names that shows it.

In: the origins of the guard's values. Out: the who-hits-it class and its evidence.
"""
