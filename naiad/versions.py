"""Naiad's version, and the Triton release whose language and API Naiad follows (what
`triton.__version__` says under the switch: libraries gate features on it)."""

NAIAD = "0.1.0"
TRITON = "3.8.0"
