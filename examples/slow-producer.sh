#!/bin/sh
# Emits tool_use blocks one by one with pauses, like a model streaming its answer: pipe it into
#   ./examples/slow-producer.sh | npx armature exec - --output stream-json
# and watch each call start before the next line is written.
emit() { printf '%s\n' "$1"; sleep "$2"; }
emit '{"type":"tool_use","id":"s1","name":"Sleep","input":{"duration_ms":1200}}' 1
emit '{"type":"tool_use","id":"s2","name":"Glob","input":{"pattern":"*.json"}}' 1
emit '{"type":"tool_use","id":"s3","name":"Sleep","input":{"duration_ms":800}}' 1
emit '{"type":"tool_use","id":"s4","name":"Grep","input":{"pattern":"armature","glob":"*.json","output_mode":"count"}}' 0
