"""KUnit in the sandbox kernel: the KTAP parser and the cases the series adds."""
