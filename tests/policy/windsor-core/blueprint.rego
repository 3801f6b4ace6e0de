package main

import rego.v1

# One NAT gateway is one point of failure: only dev contexts may run with one.
deny_single_nat contains {"msg": msg, "path": ["terraform", i, "inputs", "single_nat_gateway"]} if {
	input.kind == "Blueprint"
	not data.bpc.context.values.dev
	some i, component in input.terraform
	component.inputs.single_nat_gateway == true
	msg := sprintf("terraform component %s runs a single NAT gateway outside a dev context", [component.name])
}
