#!/usr/bin/env python3
"""Parses a Prometheus text exposition with the Prometheus client library's own parser (PyPI
prometheus-client), as a scraper would. Usage: parse-prometheus.py FILE. Prints one JSON object:
{"families": [{"name", "type", "samples": [{"name", "labels", "value"}]}]}; exits 1 with the
parser's complaint on stderr when the text is not valid exposition format."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        text = handle.read()
    try:
        families = [
            {
                "name": family.name,
                "type": family.type,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples],
            }
            for family in text_string_to_metric_families(text)
        ]
    except Exception as error:  # the parser raises ValueError and friends
        print(f"not Prometheus exposition format: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump({"families": families}, sys.stdout)


if __name__ == "__main__":
    main()
