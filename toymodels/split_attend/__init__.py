"""Chapter "Split, attend, concatenate, mix": the five steps over real matrices, the parameter
count, the block diagram."""
