package main

import rego.v1

# Talos releases older than 1.14 miss the kernel fixes the platform relies on.
deny_talos_version contains {"msg": msg, "path": ["variables", "talos_version"]} if {
	input.kind == "TerraformVariables"
	version := input.variables.talos_version
	semver.compare(version, "1.14.0") < 0
	msg := sprintf("component %s runs Talos %s, older than 1.14.0", [input.component, version])
}
