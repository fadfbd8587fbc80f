"""AutoSciBench-style generation: tasks made harder from solver behaviour, offline by default."""
