"""Write toymodels/data/charmodel/live-curve.json: the default recipe of "Train it yourself"
trained by toymodels/one_character/train_live.py, for the section's figure before (or without)
JavaScript.

    python -m toymodels.training.live_curve

Build-only: the figure only reads the file. Training is deterministic, so the file is what the
reader's own run of the default recipe logs (tests/test_train_live.py holds a prefix of it
against a fresh run).
"""

import json

from toymodels.one_character import train_live
from toymodels.page import data


def main():
    out = train_live.curve()
    path = data.HERE / train_live.CURVE
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{path}: {out['steps']} steps, copying passed half at step {out['half']}")


if __name__ == "__main__":
    main()
