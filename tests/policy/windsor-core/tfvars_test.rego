package main

# A test of the policies (run with `opa test`): bpc never reads it as a policy, so
# the line below, which is not Rego, is no error.
this line is not Rego
