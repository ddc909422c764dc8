#!/usr/bin/env bats
load helpers

@test "placeholder: version" {
  run "$CLSORT" --version
  assert_success
}
