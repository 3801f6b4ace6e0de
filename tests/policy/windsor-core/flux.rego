package main

import rego.v1

# A Kustomization that may take more than ten minutes holds up every one after it.
warn_slow contains {"msg": msg, "path": ["spec", "timeout"]} if {
	input.kind == "Kustomization"
	regex.match(`^([1-9][0-9]+)m`, input.spec.timeout)
	to_number(regex.find_n(`^[0-9]+`, input.spec.timeout, 1)[0]) > 10
	msg := sprintf("Kustomization %s may take %s", [input.metadata.name, input.spec.timeout])
}

# The database takes its time to come up on purpose.
exception contains rules if {
	input.metadata.name == "database-install"
	rules := ["slow"]
}
