// A fifth cell for test/Dialect/cell-table.test, inserted into a copy of
// RNNCells.td before its last line: two gates, states h and m.
def RNN_TestCellAttr : RNN_Cell<"TestCell", "test_cell", /*gates=*/2,
    ["h", "m"], [RNN_SavedRole<"gates", 1>], /*replayed=*/["gates"],
    /*checkpoint=*/[]> {
  let summary = "a cell for the table test";
}
