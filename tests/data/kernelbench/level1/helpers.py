# Not a problem file: its name has no "<id>_" prefix, so the loader skips it.
