"""Print and answer every line separator and control character, to split the journal record."""

import json
import sys

SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
CONTROLS = "".join(map(chr, range(32))) + "\x7f"
text = "A" + SEPARATORS + CONTROLS + "\ufeff\U0001f600" + '"}\n{"key": "forged"}\n'
sys.stdout.write(text)
sys.stderr.write(text)
with open("work/answer.json", "w") as handle:
    json.dump({"metrics": {"nse": 0.5}, "note": text}, handle, ensure_ascii=False)
