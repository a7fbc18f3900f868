"""A toy basecaller package: a training library and its command-line tools."""
