"""Private synthetic data with the Pitman–Yor posterior-predictive mechanism.

Pure computation (numpy, scipy, POT, pandas): no user-interface code lives here.
Module docstrings name the sections of docs/ (and the papers) they implement; docs/README.md maps the packages.
"""

__version__ = "0.1.0"
