"""The generator of core/spec (generate.py runs it): one module per output, and the spec as data."""
