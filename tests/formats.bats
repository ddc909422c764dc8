#!/usr/bin/env bats
load helpers

@test "placeholder: formats pending" {
  run "$CLSORT" --version
  assert_success
}
