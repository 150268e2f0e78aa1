module github.com/nodeagent/nodeagent

go 1.26.0
