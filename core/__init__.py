"""Private synthetic data with the Pitman–Yor posterior-predictive mechanism.

Pure computation (numpy, scipy, POT, pandas): no user-interface code lives here.
The formulas follow ``SPEC.md``; module docstrings name the sections they implement.
"""

__version__ = "0.1.0"
