#!/usr/bin/env bats
load helpers

@test "placeholder: outofcore pending" {
  run "$CLSORT" --version
  assert_success
}
