"""The bundled sample data (CSV files, their public bounds and how they were made).

Found by :data:`core.release.SAMPLE_DIR` through :mod:`importlib.resources`, so they are
found wherever the package is installed, not only in a source checkout.
"""
