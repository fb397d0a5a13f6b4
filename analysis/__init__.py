"""Rules, replay, scoring, checking, simulation, metrics, charts and the command line."""
