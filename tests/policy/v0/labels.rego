package main

# Written as conftest's older examples are (Rego v0: `deny[msg] { … }`, no
# `import rego.v1`): bpc reads such a file as v0.

name = input.metadata.name

deny[msg] {
	input.kind == "GitRepository"
	not input.spec.ref.tag
	msg = sprintf("GitRepository %s follows a branch, not a tag", [name])
}
