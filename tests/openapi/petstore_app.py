"""A small pet store written with FastAPI, the REST API the OpenAPI bridge is tested against.

`petstore.yaml` (OpenAPI 3.1) and `petstore30.yaml` (3.0) describe it by hand, the way an API's
own document would; FastAPI's generated document (`app.openapi()`) describes it too, for
`from_fastapi`. It keeps its pets in memory and counts every request it answers, so a test can
say that a refused call sent nothing. Every route needs the `X-Api-Key` header (`KEY`): the
bridge sends it from configuration, never from the MCP client.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field, field_validator

KEY = "test-key-7"
# The first bytes of a PNG file and a few more: the photo route's binary answer.
PHOTO = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))


class Status(enum.StrEnum):
    available = "available"
    pending = "pending"
    sold = "sold"


class Owner(BaseModel):
    name: str
    email: str

    @field_validator("email")
    @classmethod
    def _has_at(cls, value: str) -> str:
        # The documents say only "a string": this check is the API's own, so a call that
        # passes the tool's schema can still meet the API's 422.
        if "@" not in value:
            raise ValueError("an email address has an @")
        return value


class NewPet(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    status: Status = Status.available
    owner: Owner | None = None
    tags: list[str] = []


class Pet(NewPet):
    id: int


class Page(BaseModel):
    items: list[Pet]
    request_id: str | None = None


def create_app() -> FastAPI:
    """A fresh store with two pets."""
    app = FastAPI(title="Pet Store", version="1.2.0")
    pets: dict[int, Pet] = {
        1: Pet(id=1, name="Rex", status=Status.available, tags=["dog"]),
        2: Pet(id=2, name="Tom", status=Status.sold, tags=["cat"],
               owner=Owner(name="Ada", email="ada@example.com")),
    }
    app.state.requests = 0
    app.state.pets = pets

    async def key(request: Request, x_api_key: Annotated[str | None, Header()] = None) -> None:
        request.app.state.requests += 1
        if x_api_key != KEY:
            raise HTTPException(401, "a valid X-Api-Key header is needed")

    def found(pet_id: int) -> Pet:
        pet = pets.get(pet_id)
        if pet is None:
            raise HTTPException(404, f"no pet {pet_id}")
        return pet

    @app.get("/pets", operation_id="listPets", dependencies=[Depends(key)])
    async def list_pets(status: Status | None = None,
                        limit: Annotated[int, Query(ge=1, le=100)] = 20,
                        tag: Annotated[list[str] | None, Query()] = None,
                        x_request_id: Annotated[str | None, Header()] = None) -> Page:
        chosen = [p for p in pets.values() if (status is None or p.status == status)
                  and (not tag or set(tag) & set(p.tags))]
        return Page(items=chosen[:limit], request_id=x_request_id)

    @app.post("/pets", operation_id="createPet", status_code=201,
              dependencies=[Depends(key)])
    async def create_pet(pet: NewPet) -> Pet:
        made = Pet(id=max(pets, default=0) + 1, **pet.model_dump())
        pets[made.id] = made
        return made

    @app.get("/pets/{pet_id}", operation_id="getPet", dependencies=[Depends(key)])
    async def get_pet(pet_id: int) -> Pet:
        return found(pet_id)

    @app.put("/pets/{pet_id}", operation_id="updatePet", dependencies=[Depends(key)])
    async def update_pet(pet_id: int, pet: NewPet) -> Pet:
        found(pet_id)
        pets[pet_id] = Pet(id=pet_id, **pet.model_dump())
        return pets[pet_id]

    @app.delete("/pets/{pet_id}", operation_id="deletePet", status_code=204,
                dependencies=[Depends(key)])
    async def delete_pet(pet_id: int) -> Response:
        found(pet_id)
        del pets[pet_id]
        return Response(status_code=204)

    @app.get("/pets/{pet_id}/photo", operation_id="getPetPhoto", dependencies=[Depends(key)],
             responses={200: {"content": {"image/png": {}}}}, response_class=Response)
    async def get_photo(pet_id: int) -> Response:
        found(pet_id)
        return Response(PHOTO, media_type="image/png")

    @app.get("/echo", operation_id="echo", dependencies=[Depends(key)])
    async def echo(request: Request) -> dict[str, Any]:
        """What the request carried: its headers and its query, for checks of the wire."""
        return {"headers": dict(request.headers), "query": str(request.url.query)}

    return app


app = create_app()
