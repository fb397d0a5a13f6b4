"""The rules engine: rulesets, the reference replay, scoring, findings and the checker.

Everything a director relies on for "was this legal, is this score right" lives here; the analysis
side (metrics, charts, stats, coaching, report) and the simulator only call into it.
"""
