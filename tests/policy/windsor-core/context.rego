package main

import rego.v1

# Policy enforcement stays on in every context; reads the context's values, not an
# input document, so it is asked once, of the blueprint.
deny_policies_off contains msg if {
	input.kind == "Blueprint"
	data.bpc.context.values.policies.enabled == false
	msg := sprintf("context %s turns Kyverno policies off", [data.bpc.context.name])
}

# Alert routing is worth knowing about; the webhook itself reaches policies masked.
warn_slack contains msg if {
	input.kind == "Blueprint"
	hook := data.bpc.context.values.telemetry.alerts.slack.webhook_url
	msg := sprintf("context %s routes alerts to Slack (webhook %s)", [data.bpc.context.name, hook])
}
