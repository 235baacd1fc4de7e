"""End-to-end: the pure path from a weak σ = 0 release (docs/mathematics.md §3.3.1, §3.6).

On the bundled sample (earnings, public bounds [0, 100]) the default σ = 0 release is weak: the
Privacy page points to the pure path with its largest m (⌊(e^2.5 − 1)·1⌋ = 11 on the proposed
grid of step 10) and its utility cost; the Release planner shows pure options next to σ = 0 ones
with their verdicts, recommends a pure one and loads it; the Privacy page then says pure.
"""

from __future__ import annotations

import st_waits as w


def _alert(page, fragment: str) -> str:
    alert = page.locator('[data-testid="stAlert"]').filter(has_text=fragment).first
    alert.wait_for()
    return " ".join(alert.inner_text().split())


def test_a_weak_release_is_pointed_to_the_pure_path_and_the_planner_loads_it(page, app_url, artifacts_dir):
    page.set_viewport_size({"width": 1400, "height": 3000})    # the whole page in one screenshot
    w.open_app(page, app_url)
    w.go_to_page(page, "Privacy")
    assert "Verdict: weak" in _alert(page, "Verdict:")
    pointer = _alert(page, "A pure ε-DP release would have the verdict pure")
    assert "the largest pure m is 11" in pointer and "The utility cost" in pointer
    assert page.locator('[data-testid="stDataFrame"]').count() >= 1                   # the utility cost table
    assert page.get_by_role("button", name="Switch to the pure release (m = 11)").is_visible()
    assert not w.has_exception(page)
    page.screenshot(path=str(artifacts_dir / "pure_path_privacy_pointer.png"), full_page=True)

    w.go_to_page(page, "Release planner")
    box = page.locator(".st-key-_plan_w1_earnings input").first
    w.rerun_after(page, lambda: (box.fill("10"), box.press("Enter")))
    w.wait_for_idle(page)
    w.press(page, "Run planner", timeout=180_000)
    w.wait_for_idle(page)
    assert "Recommended: pure ε-DP release" in _alert(page, "Recommended:")
    assert "Verdict: pure" in _alert(page, "Verdict:")
    assert not w.has_exception(page)
    page.screenshot(path=str(artifacts_dir / "pure_path_planner.png"), full_page=True)
    w.press(page, "Load these settings")
    w.wait_for_idle(page)
    assert "each numeric column's public grid step are set" in _alert(page, "Loaded:")

    w.go_to_page(page, "Privacy")
    assert "Verdict: pure" in _alert(page, "Verdict:")
    assert page.locator('[data-testid="stAlert"]').filter(has_text="A pure ε-DP release would have").count() == 0
    page.screenshot(path=str(artifacts_dir / "pure_path_privacy_loaded.png"), full_page=True)
