#!/usr/bin/env bats
load helpers

@test "placeholder: oclgrind pending" {
  run "$CLSORT" --version
  assert_success
}
