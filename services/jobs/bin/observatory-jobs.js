#!/usr/bin/env node
// The bin npm links at install time, when dist/ does not exist yet on a fresh clone (npm links no
// bin whose file is missing): it runs the built program (`npm run build` first).
import '../dist/main.js';
