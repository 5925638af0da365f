# Finds torch without importing it (fabuild, src/provision/python_env.cpp): prints a JSON object
# with torch's distribution version and the `cuda` and `hip` of torch/version.py, or {} when
# this interpreter has no torch. Embedded into fabuild at build time and run as `python -c`.
import importlib.metadata as m, importlib.util as u, json, os, re
out = {}
try:
    out["torch_version"] = m.version("torch")
    spec = u.find_spec("torch")
    text = open(os.path.join(os.path.dirname(spec.origin), "version.py")).read()
    for key, name in (("cuda", "torch_cuda"), ("hip", "torch_hip")):
        found = re.search(r"^" + key + r"\b[^=]*=\s*'([^']*)'", text, re.M)
        if found:
            out[name] = found.group(1)
except Exception:
    pass
print(json.dumps(out))
