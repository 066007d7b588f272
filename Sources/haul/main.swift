import HaulCLI

await HaulCommand.main(demo: DemoOrigin.testServer)
