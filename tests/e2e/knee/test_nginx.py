"""`kneebench knee` against nginx from Debian (gzip level 9 on every request, one worker on
CPU 0), through tests/e2e/knee/nginx_knee.py at a small scale: the knee is located within
the resolution, its held end held its hold sample against nginx, and three times the missed
end is not held as an independent point. The figures nginx_knee.py prints for the held end
and 1.1 x the missed end as independent points stay figures: near its knee nginx on a
shared 2-CPU host moves by more than 10 % from one minute to the next, and the full-scale
check (30 s hold, 30 s points, wrk2 beside) is `make bench-knee-nginx`."""
import json
import os
import subprocess
import sys
import tempfile

from kbenv import KB, need
from kbtest import exit_with, skip, test, timeout

HERE = os.path.dirname(os.path.abspath(__file__))


@test
@timeout(1200)     # its search alone may take the 15 minutes its subprocess is given
def nginx_knee_is_located_and_its_held_end_holds():
    need(KB)
    if os.cpu_count() < 2:
        skip("needs two CPUs: nginx on one, the client on the other")
    out = tempfile.mktemp(prefix="kb-nginx-", suffix=".json")
    p = subprocess.run([sys.executable, os.path.join(HERE, "nginx_knee.py"), "--hold", "5",
                        "--point", "5", "--over", "1.1,3", "--json", out], capture_output=True, text=True,
                       timeout=900, env=os.environ)
    if p.returncode == 77:
        skip(p.stderr.strip())
    print(p.stdout, end="")
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    j = json.load(open(out))
    k = j["knee"]
    assert k["rc"] == 0 and k["headline"].startswith("knee between"), k
    assert k["hi"] / k["lo"] - 1 <= 0.05 + 1e-9, (k["lo"], k["hi"])
    assert "the held end held for 5 s" in k["headline"], k["headline"]
    last = k["holds"][-1]
    assert last["rate_rps"] == k["lo"] and last["verdict"] == "controlled", k["holds"]
    # every hold before the last missed, at a rate above the final held end
    assert all(h["rate_rps"] > k["lo"] and h["verdict"] != "controlled" for h in k["holds"][:-1])
    # three times past the missed end nginx's backlog grows by twice its capacity a second
    far = [x for x in j["points"] if x["what"] == "3 x missed end"]
    assert len(far) == 1 and far[0]["rc"] in (0, 4, 5) and not far[0]["controlled"], far


if __name__ == "__main__":
    exit_with("e2e-nginx")
