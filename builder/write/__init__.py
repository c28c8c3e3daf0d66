"""The Spark write path: validate the input, tag it against the record index, plan file groups,
rewrite touched file groups copy-on-write, and update the index partitions — all in one instant."""
