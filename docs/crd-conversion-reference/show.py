# Prints the reviews hook.py logged (run in its directory).
import json
for l in open("log.jsonl"):
  e=json.loads(l)
  if e["t"]=="convert": print("  convert ->",e["desired"].split("/")[1], [f.split("/")[1] for f in e["from"]]); continue
  ver=lambda o: o and o.split("/")[1]
  print(e["t"],e["op"],"kind",e["kind"]["version"],"res",e["resource"]["version"],"reqKind",e["requestKind"]["version"],"reqRes",e["requestResource"]["version"],"sub",e.get("subResource"),"obj",ver(e["objApiVersion"]),sorted((e["spec"] or {}).keys()),"old",ver(e["oldApiVersion"]),sorted((e["oldSpec"] or {}).keys()), "labels", e.get("labels"))
