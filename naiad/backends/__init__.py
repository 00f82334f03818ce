"""Naiad's back ends: each turns the compiler's IR into code for one kind of machine and runs it.

Back ends never import each other; what they share lives below them (ir, dialects, passes, middle).
"""
