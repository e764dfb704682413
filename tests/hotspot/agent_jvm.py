# SPDX-License-Identifier: Apache-2.0
"""What the tests/hotspot scripts share: a JVM started under a JDWP agent, and its port."""
import re
import subprocess
import time


def launch(java, agent_args, classes, main, out_path, ready=None, env=None, timeout=30):
    """Starts MAIN (on CLASSES) under AGENT_ARGS with its output in OUT_PATH; returns the process
    and the port the agent announced ("Listening for transport dt_socket at address: PORT"), once
    READY (a string) is in the output too when one is given; the port is None if that did not
    happen within TIMEOUT seconds or the JVM ended."""
    with open(out_path, "wb") as out:
        vm = subprocess.Popen([java, *agent_args, "-cp", classes, main],
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and vm.poll() is None:
        with open(out_path, errors="replace") as f:
            text = f.read()
        m = re.search(r"Listening for transport dt_socket at address: (\d+)", text)
        if m and (ready is None or ready in text):
            return vm, m.group(1)
        time.sleep(0.05)
    return vm, None
