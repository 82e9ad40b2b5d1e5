"""Reports draw headless figures without choosing matplotlib's backend for the process that imports omniaudit."""

import subprocess
import sys


def test_importing_omniaudit_and_drawing_leaves_the_backend_alone(tmp_path):
    png = tmp_path / "f.png"
    script = ("import matplotlib; matplotlib.use('svg')\n"
              "import omniaudit.evaluation, omniaudit.evaluation.report as r, omniaudit.evaluation.scorecard.figures\n"
              "fig, axes = r.plt.subplots(1, 2, figsize=(3, 2), dpi=50)\n"
              "axes[0].plot([0, 1], [1, 0])\n"
              f"r.save_figure(fig, {str(png)!r})\n"
              "import matplotlib.pyplot as pyplot\n"
              "print(matplotlib.get_backend(), len(pyplot.get_fignums()))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert out.stdout.split() == ["svg", "0"]  # the user's backend, and no figure left in pyplot's registry
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
