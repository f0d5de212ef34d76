import os, time, json
def T(label, **kw):
    with open("/tmp/covey_timing.log", "a") as f:
        f.write(json.dumps({"t": time.time(), "pid": os.getpid(), "label": label, **kw}) + "\n")
