"""Making a release: the recipe, its run, the reports and the bundles (docs/mathematics.md §3.4).

* :mod:`.recipe` — :class:`ReleaseRecipe` (every transform and parameter of a release, as
  JSON) and :func:`run_recipe`, the one pipeline the app and the command line share;
* :mod:`.mechanisms` — every mechanism a recipe can name (PYPP, AIM, MST, the OpenDP and the
  seed papers' histograms) behind one interface (docs/verdicts.md §6);
* :mod:`.public` — the public report (public quantities only);
* :mod:`.report` — the guarantees of a PYPP release and its report;
* :mod:`.bundle` — the public release and the CONFIDENTIAL curator record, as zip files.
"""

from .bundle import (
    CURATOR_BUNDLE_NAME,
    PUBLIC_BUNDLE_NAME,
    ReleaseBundles,
    build_bundles,
    curator_bundle,
    public_bundle,
    write_bundles,
    write_output,
)
from .recipe import (
    MAX_RECIPE_SIZE,
    MECHANISMS,
    SAMPLE_DIR,
    SCHEMA,
    SCHEMA_VERSION,
    SIZE_RULES,
    ReleaseRecipe,
    ReleaseResult,
    public_report,
    public_source,
    resolve_release_size,
    run_recipe,
    sample_source,
    upload_source,
)
from .mechanisms import DEFAULT_BINS, RELEASE_MECHANISMS, MechanismSpec, ReleaseMechanism, release_mechanism
from .report import guarantees, release_report

__all__ = [
    "CURATOR_BUNDLE_NAME", "DEFAULT_BINS", "MAX_RECIPE_SIZE", "MechanismSpec", "RELEASE_MECHANISMS",
    "ReleaseMechanism", "release_mechanism", "MECHANISMS", "PUBLIC_BUNDLE_NAME", "SAMPLE_DIR", "SCHEMA",
    "SCHEMA_VERSION", "SIZE_RULES", "ReleaseBundles", "ReleaseRecipe", "ReleaseResult", "build_bundles",
    "curator_bundle", "guarantees", "public_bundle", "public_report", "public_source", "release_report",
    "resolve_release_size", "run_recipe", "sample_source", "upload_source", "write_bundles",
    "write_output",
]
