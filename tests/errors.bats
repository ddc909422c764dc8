#!/usr/bin/env bats
load helpers

@test "placeholder: errors pending" {
  run "$CLSORT" --version
  assert_success
}
