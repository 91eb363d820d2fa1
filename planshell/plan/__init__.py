"""Plan mode: the plan document model and the on-disk plan store."""
