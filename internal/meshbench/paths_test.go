package meshbench_test

// resultsPath is the recorded results, relative to the package.
const resultsPath = "../../docs/scale/results.json"
