"""The simulator's parts: personalities, bots, fault kinds, seasons (see :mod:`analysis.simulate`)."""
