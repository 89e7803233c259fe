"""Host side of the y2038 rollover sandbox."""
