"""python -m oncoeval.review page|import ... (make review, make review-import)."""

import argparse
import sys
from pathlib import Path

from ..config.load import load_config
from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings
from . import build, importer, plan, studies


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    what = argv.pop(0) if argv and argv[0] in ("page", "import") else "page"
    parser = argparse.ArgumentParser(prog="python -m oncoeval.review [page|import]")
    parser.add_argument("--study", default="cancer_myth")
    parser.add_argument("--reviewer", default="")
    parser.add_argument("--labels", type=int, default=plan.PlanSettings.n_labels)
    parser.add_argument("--seed", type=int, default=None, help="default: the bootstrap seed")
    parser.add_argument("--replan", action="store_true", help="draw a new plan")
    parser.add_argument("--adjudicate", nargs="*", default=None, help="label files to adjudicate")
    parser.add_argument("--out", default=None, help="where import writes the human labels")
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--config", nargs="*", default=[], help="Snakemake's KEY=VALUE overrides")
    parser.add_argument("--root", default=".")
    parser.add_argument("files", nargs="*")
    args, _ = parser.parse_known_args(argv)
    root = Path(args.root)
    config = load_config(root, args.configfile, args.config)
    try:
        if what == "import":
            summary = importer.run_import(
                root,
                args.study,
                args.files,
                BootstrapSettings.from_config(config),
                args.out,
                config,
            )
            for key, value in summary.items():
                print(f"{key}: {value}")
            key = studies.review_study(args.study).labels_key
            print(f"Point studies.{args.study}.{key} at {summary['human_scores']} and rerun.")
        elif args.adjudicate is not None:
            out = importer.adjudication_page(
                root, config, args.study, args.adjudicate, args.reviewer
            )
            print(f"Adjudication page: {out}")
        else:
            settings = plan.PlanSettings.from_config(config, args.labels, args.seed)
            out = build.build(root, config, args.study, args.reviewer, settings, args.replan)
            print(f"Review page: {out}")
    except InputError as err:
        print(f"review: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
