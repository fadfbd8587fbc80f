"""An agent built on the openai SDK, wrapped as a `command` agent: one call, run the code it gets.

It reaches the model only through the harness's proxy: the Unix socket in $SCIBENCH_LLM_SOCKET.
"""

import os
import re
import subprocess
import sys

import httpx
import openai

workspace = sys.argv[1]
client = openai.OpenAI(base_url="http://llm/v1", api_key="unused", max_retries=0, http_client=httpx.Client(
    transport=httpx.HTTPTransport(uds=os.environ["SCIBENCH_LLM_SOCKET"])))
prompt = open(os.path.join(workspace, "prompt.md")).read()
reply = client.chat.completions.create(model=os.environ["SCIBENCH_LLM_MODEL"],
                                       messages=[{"role": "user", "content": prompt}])
code = re.search(r"```python\n(.*?)```", reply.choices[0].message.content, re.S).group(1)
subprocess.run([sys.executable, "-c", code], cwd=workspace, check=True)
