#!/usr/bin/env bats
load helpers

@test "placeholder: sort pending" {
  run "$CLSORT" --version
  assert_success
}
